#!/usr/bin/env python3
"""Checks the developers' guide's size limits outside tests/: no source file
over 500 lines, no C++ or CUDA function over 120 lines (from the first line of
its signature to its closing brace). Run as the test source_sizes:

    python3 cmake/check_sizes.py SOURCE_DIR

Prints the longest files and functions it measured, each one over a limit,
and fails if there is one. Standard library only."""

import os
import re
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 120
SOURCE_SUFFIXES = (".cpp", ".h", ".cu", ".cuh", ".py", ".sh", ".cmake")
CXX_SUFFIXES = (".cpp", ".h", ".cu", ".cuh")

# Over a limit, each with its reason and the work that removes it. An entry
# that is no longer over its limit fails too, so that the list cannot go stale.
KNOWN_OVER = {}


def source_files(root):
    """Paths relative to `root` of the sources outside tests/, build folders and hidden folders."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".")
            and name != "tests"
            and not os.path.exists(os.path.join(folder, name, "CMakeCache.txt"))
        )
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES) or name == "CMakeLists.txt":
                yield os.path.relpath(os.path.join(folder, name), root)


# Comments, string and character literals (raw strings included), which may
# hold braces and parentheses that are no code.
LITERAL = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S
)


def code_only(text):
    """`text` with comments, literals and preprocessor lines blanked, line breaks kept."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    text = LITERAL.sub(blank, text)
    return re.sub(r"(?m)^[ \t]*#.*$", blank, text)


CONTAINER = re.compile(r"\b(namespace|class|struct|union)\b")


def classify(header):
    """What the block a header opens is: "container" (namespace, class), "function" or "other"."""
    if header.strip() == "extern" or (CONTAINER.search(header) and "(" not in header and not re.search(r"\benum\b", header)):
        return "container"
    if "(" not in header:
        return "other"
    outside = header
    while re.search(r"\([^()]*\)", outside):
        outside = re.sub(r"\([^()]*\)", "", outside)
    outside = re.sub(r"\boperator\s*[^\s\w]+", "operator", outside)
    return "other" if re.search(r"(?<![=!<>])=(?!=)", outside) else "function"


def function_name(header):
    """The name before the parameter list, past attributes such as __launch_bounds__(...)."""
    while True:
        match = re.search(r"\b(__launch_bounds__|__attribute__|alignas|__declspec)\s*\(", header)
        if not match:
            break
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(header)):
            depth += {"(": 1, ")": -1}.get(header[end], 0)
            if depth == 0:
                break
        header = header[: match.start()] + header[end + 1 :]
    names = re.findall(r"((?:[\w:]*::)?operator\s*[^\s\w(]+|[~\w:]+)\s*\(", header)
    return names[0] if names else "?"


def functions(text):
    """(name, first line, last line) of every function that C++ or CUDA source `text` defines.

    Reads the headers at namespace and class scope: a brace block whose header
    has a parameter list and no '=' is a function; namespace and class blocks
    are read into, every other block (and a function's body) is skipped whole."""
    code = code_only(text)
    found = []
    scopes = []  # one per open brace: "container", "function", "other" or "inner"
    header_start = None  # offset where the header being read begins
    parens = 0
    current = None  # (name, first line) of the function whose body is open
    for i, ch in enumerate(code):
        if scopes and scopes[-1] != "container":  # inside a function or another block
            if ch == "{":
                scopes.append("inner")
            elif ch == "}":
                kind = scopes.pop()
                if kind == "function":
                    found.append((current[0], current[1], code.count("\n", 0, i) + 1))
                if kind != "inner":
                    header_start = None
            continue
        if ch == "(":
            parens += 1
        elif ch == ")":
            parens = max(0, parens - 1)
        elif parens == 0 and ch in "{};":
            if ch == "{":
                header = code[header_start:i] if header_start is not None else ""
                kind = classify(header)
                if kind == "function":
                    current = (function_name(header), code.count("\n", 0, header_start) + 1)
                scopes.append(kind)
            elif ch == "}" and scopes:
                scopes.pop()
            header_start = None
            continue
        if header_start is None and not ch.isspace():
            header_start = i
    return found


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    files, long_functions = [], []
    for path in source_files(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        files.append((text.count("\n"), path))
        if path.endswith(CXX_SUFFIXES):
            for name, first, last in functions(text):
                long_functions.append((last - first + 1, f"{path}: {name}", first))
    files.sort(reverse=True)
    long_functions.sort(reverse=True)
    print(f"{len(files)} source files outside tests/, {len(long_functions)} C++/CUDA functions measured")
    print(f"longest files (limit {MAX_FILE_LINES} lines):")
    for lines, path in files[:5]:
        print(f"  {lines:5d}  {path}")
    print(f"longest functions (limit {MAX_FUNCTION_LINES} lines, signature to closing brace):")
    for lines, where, first in long_functions[:5]:
        print(f"  {lines:5d}  {where} (line {first})")
    over = [(path, lines, MAX_FILE_LINES) for lines, path in files if lines > MAX_FILE_LINES]
    over += [(where, lines, MAX_FUNCTION_LINES) for lines, where, _ in long_functions if lines > MAX_FUNCTION_LINES]
    failures = []
    for what, lines, limit in over:
        if what in KNOWN_OVER:
            print(f"known: {what}, {lines} lines (limit {limit}): {KNOWN_OVER[what]}")
        else:
            failures.append(f"{what}: {lines} lines, over the limit of {limit}")
    for what in sorted(set(KNOWN_OVER) - {what for what, _, _ in over}):
        failures.append(f"{what} is no longer over its limit: remove it from KNOWN_OVER in cmake/check_sizes.py")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
