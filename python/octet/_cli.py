"""The `octet` command of the pip package: becomes the octet binary the
package carries (octet/bin/octet) with the user's arguments, so its output
and exit status are the command's own."""

import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "octet")
    if not os.access(binary, os.X_OK):
        sys.exit(f"octet: {binary} is missing: this octet was not installed from its pip package (setup.py)")
    os.execv(binary, ["octet"] + sys.argv[1:])
