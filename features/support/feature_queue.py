"""Feature files handed out one at a time to behave processes running side by side: each process takes the next file
when it has finished its last, the longest (by `features/feature-seconds.txt`) first.

    python features/support/feature_queue.py QUEUE [behave's options]

QUEUE is a file of feature paths, one a line, in the order they are to be taken, beside which the number of lines
already taken is kept (`QUEUE.taken`, under a lock). A process loads behave's hooks and steps once (an import of
every SDK, some 15 s of CPU) and runs the files it takes in that one run, as `behave file file ...` would: one
`before_all`, one summary. Dealt out before the start instead, each process's share was fixed by times that moved
with the load and with what ran beside it, and the session waited on the process whose files ran long.
"""

from __future__ import annotations

import fcntl
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from behave.__main__ import run_behave
from behave.configuration import Configuration
from behave.formatter._registry import make_formatters
from behave.parser import parse_file
from behave.runner import Context, Runner


def take(queue: Path) -> str | None:
    """The next feature path in `queue` not yet taken by any process, or None when all have been."""
    paths = [line.strip() for line in queue.read_text().splitlines() if line.strip()]
    with Path(f"{queue}.taken").open("a+") as taken:
        fcntl.flock(taken, fcntl.LOCK_EX)  # released when the file closes
        taken.seek(0)
        count = int(taken.read().strip() or 0)
        if count >= len(paths):
            return None
        taken.seek(0)
        taken.truncate()
        taken.write(str(count + 1))
        return paths[count]


def queue_runner(queue: Path) -> type[Runner]:
    """A behave Runner whose features are taken from `queue` one at a time, as the run reaches them."""

    class QueueRunner(Runner):
        def run_with_paths(self) -> Any:
            self.context = Context(self)
            self.load_hooks()
            self.load_step_definitions()
            self.formatters = make_formatters(self.config, self.config.outputs)
            return self.run_model(features=self._taken())

        def _taken(self) -> Iterator[Any]:
            while (path := take(queue)) is not None:
                feature = parse_file(path, language=self.config.lang)
                if feature is None:  # an empty file
                    continue
                self.features.append(feature)
                yield feature

    return QueueRunner


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    queue, *options = argv
    # behave finds environment.py and steps/ from the paths it is given: features/, whose files the queue hands out.
    config = Configuration([*options, str(Path(__file__).parents[1])])
    return run_behave(config, runner_class=queue_runner(Path(queue)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
