"""``--config/-c`` anywhere on the command line: moved in front of the subcommand before Click parses.

Click reads a group's options only before the subcommand, so ``driftgraph query local Q -c my.yaml`` would
otherwise fail with "No such option". No subcommand defines its own ``-c``, so hoisting is unambiguous;
everything after a literal ``--`` is left alone.
"""

from __future__ import annotations

FLAGS = ("--config", "-c")


def hoist_config(argv: list[str]) -> list[str]:
    """``argv`` with every ``--config X`` / ``--config=X`` / ``-c X`` / ``-cX`` moved to the front, in order."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        if arg in FLAGS and i + 1 < len(argv):
            front += [arg, argv[i + 1]]
            i += 2
            continue
        if arg.startswith("--config=") or (arg.startswith("-c") and len(arg) > 2 and not arg.startswith("--")):
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return front + rest
