#!/usr/bin/env python3
"""The main loop of each cuda-imma kernel in a SASS listing, counted.

usage: sass_main_loop.py SASS TILES_HEADER

SASS: the output of `cuobjdump --dump-sass` or `nvdisasm` for
runtime/cuda/conv2d_imma.cu; TILES_HEADER: runtime/cuda/implicit_gemm.h,
whose tile table names the kernels (conv2d_imma_kernel<i, u> runs tile i, for
an unsigned input where u: named "(u8 input)").

The main loop is one K stage: from the cp.async wait (DEPBAR) before the
barrier that precedes the first IMMA to the branch after the last IMMA.
Its static instruction count is what every warp issues per K stage (the
copies of the last stages, skipped by a branch, included), so "others per
IMMA" is the issue cost a tile pays around its tensor-core work. One line
per kernel, in tile order; exit status 1 when a kernel has no IMMA.
"""
import re
import sys

HEADER = re.compile(r"Function : (\S+)|//-+ \.text\.(\S+) -+")
INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
TILE = re.compile(r"conv2d_imma_kernelILi(\d+)E(?:Lb([01])E)?")


def kernels(listing):
    """(name, [instruction text]) of each function in the listing."""
    name, body = None, []
    for line in listing.splitlines():
        header = HEADER.search(line)
        if header:
            if name:
                yield name, body
            name, body = header.group(1) or header.group(2), []
        elif name:
            instruction = INSTRUCTION.match(line)
            if instruction:
                body.append(instruction.group(1))
    if name:
        yield name, body


def opcode(instruction):
    return re.sub(r"^@!?U?P[T0-9]\s+", "", instruction).split()[0].split(".")[0]


def main_loop(body):
    """The opcodes of the main loop, or None without IMMA."""
    imma = [i for i, text in enumerate(body) if opcode(text) == "IMMA"]
    if not imma:
        return None
    barriers = [i for i in range(imma[0]) if opcode(body[i]) == "BAR"]
    start = barriers[-1] if barriers else 0
    while start > 0 and opcode(body[start]) != "DEPBAR":
        start -= 1
    end = next((i for i in range(imma[-1], len(body)) if opcode(body[i]) == "BRA"), len(body) - 1)
    return [opcode(text) for text in body[start:end + 1]]


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[2]) as header:
        names = re.findall(r'\{"(\w+)", \d+, \d+, \d+,', header.read())
    with open(argv[1]) as listing:
        found = sorted((int(match.group(1)), match.group(2) == "1", body) for name, body in kernels(listing.read())
                       for match in [TILE.search(name)] if match)
    if not found:
        print(f"sass_main_loop.py: no conv2d_imma_kernel in {argv[1]}", file=sys.stderr)
        return 1
    status = 0
    for tile, unsigned_input, body in found:
        name = (names[tile] if tile < len(names) else f"tile {tile}") + (" (u8 input)" if unsigned_input else "")
        loop = main_loop(body)
        if loop is None:
            print(f"{name}: no IMMA instruction")
            status = 1
            continue
        count = {op: loop.count(op) for op in ("IMMA", "LDSM", "LDGSTS")}
        print(f"{name}: main loop {len(loop)} instructions per K stage, {count['IMMA']} IMMA, "
              f"{count['LDSM']} LDSM, {count['LDGSTS']} LDGSTS: "
              f"{(len(loop) - count['IMMA']) / count['IMMA']:.2f} others per IMMA")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
