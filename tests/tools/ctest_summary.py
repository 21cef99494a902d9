#!/usr/bin/env python3
"""One line for the end of a ctest run: how many entries ran, passed and
failed, and how many were skipped, grouped by reason. ctest's own
"100% tests passed" counts skips as passes; this line does not.

    ctest --test-dir build --output-junit ctest-junit.xml
    python3 tests/tools/ctest_summary.py build/ctest-junit.xml

prints
    ctest: ran R: passed P, failed F; skipped S: <reason> (n), ...[; disabled D][; failed: <names>]

The reason of a skip is the first line of its message: for a GoogleTest skip
(SKIP_REGULAR_EXPRESSION), the line after "<file>:<line>: Skipped"; for a
script's exit 77 (SKIP_RETURN_CODE), its last "SKIP: ..." or "skipped: ..."
line, else its last line. A leading "<name>: " (a word without spaces, such as
a backend's name) is dropped, so that one cause is one group. An entry ctest
could not start (a missing executable) counts as failed, a disabled one apart.
Standard library only; exits 2 when the file cannot be read.
"""

import collections
import re
import sys
import xml.etree.ElementTree as ElementTree

SKIP_MESSAGES = ("SKIP_RETURN_CODE", "SKIP_REGULAR_EXPRESSION_MATCHED")
SKIP_LINE = re.compile(r"^\s*(?:SKIP|skipped?)\s*:\s*(.*)$", re.IGNORECASE)
GTEST_SKIPPED = re.compile(r":\d+: Skipped$")
NAME_PREFIX = re.compile(r"^[^\s:]+: (?=\S)")


def gtest_reason(lines):
    for i, line in enumerate(lines):
        if GTEST_SKIPPED.search(line):
            rest = [text for text in lines[i + 1:] if text.strip()]
            if rest and not rest[0].startswith("[  SKIPPED ]"):
                return rest[0]
            return "no reason given"
    return None


def script_reason(lines):
    marked = [m.group(1) for m in map(SKIP_LINE.match, lines) if m and m.group(1).strip()]
    if marked:
        return marked[-1]
    rest = [line for line in lines if line.strip()]
    return rest[-1] if rest else "no reason given"


def skip_reason(output):
    lines = output.splitlines()
    reason = gtest_reason(lines) or script_reason(lines)
    return NAME_PREFIX.sub("", reason.strip(), count=1)


def summarize(junit_path):
    cases = ElementTree.parse(junit_path).getroot().iter("testcase")
    passed = failed = disabled = 0
    failed_names, reasons = [], collections.Counter()
    for case in cases:
        status = case.get("status")
        skipped = case.find("skipped")
        output = case.findtext("system-out") or ""
        if status == "run":
            passed += 1
        elif status == "disabled":
            disabled += 1
        elif status == "notrun" and skipped is not None and skipped.get("message", "").startswith(SKIP_MESSAGES):
            reasons[skip_reason(output)] += 1
        else:  # failed, timed out, or could not be started
            failed += 1
            failed_names.append(case.get("name"))
    skips = sum(reasons.values())
    line = f"ctest: ran {passed + failed}: passed {passed}, failed {failed}; skipped {skips}"
    if skips:
        # Most frequent first, then by reason, so that two runs compare line by line.
        groups = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
        line += ": " + ", ".join(f"{reason} ({count})" for reason, count in groups)
    if disabled:
        line += f"; disabled {disabled}"
    if failed_names:
        line += "; failed: " + " ".join(failed_names)
    return line


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    try:
        print(summarize(argv[1]))
    except (OSError, ElementTree.ParseError) as error:
        print(f"ctest_summary: cannot read {argv[1]}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
