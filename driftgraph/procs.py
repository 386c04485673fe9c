"""Whether a process still runs on this machine: the launcher's pid file and the index writer lock's holder
both ask it."""

from __future__ import annotations

import os
from pathlib import Path


def alive(pid: object) -> bool:
    """A process with this pid runs here; one we may not signal still counts, a zombie (killed, not yet reaped
    by its parent: it answers the signal but does no work) does not."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
