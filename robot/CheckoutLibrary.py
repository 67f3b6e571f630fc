"""Robot keywords that run Robot tests again from a copy of the checkout in a folder only its owner may enter (as
`mktemp -d` makes, or a home folder of mode 700), with a virtual environment of its own there, as a newcomer's
clone and its `.nox` are: no test may depend on where the checkout lives.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from robot.api import logger
from robot.api.deco import keyword, library

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "features" / "support"))
from readme import NOT_COPIED  # features/support: what a copy of the checkout leaves out

CHECKOUT = Path(__file__).resolve().parents[1]


@library(scope="SUITE", auto_keywords=False)
class CheckoutLibrary:
    def __init__(self) -> None:
        self._folders: list[Path] = []

    @keyword("Copy The Checkout Into A Folder Only Its Owner May Enter")
    def copy_the_checkout_into_a_folder_only_its_owner_may_enter(self) -> str:
        """`<mktemp -d>/lowtide`: the checkout's files (not what git leaves out, nor what was made), with a virtual
        environment of its own, `.venv`, whose `python` and `lowtide` are there, and which imports lowtide from
        the copy's src/ and everything else from this session's environment. Returns the copy's path."""
        folder = Path(tempfile.mkdtemp(prefix="lowtide-owner-only-"))
        self._folders.append(folder)
        if stat.S_IMODE(folder.stat().st_mode) != 0o700:
            raise AssertionError(f"{folder} is not of mode 700: {oct(folder.stat().st_mode)}")
        copy = folder / "lowtide"
        shutil.copytree(CHECKOUT, copy, ignore=NOT_COPIED, symlinks=True)
        venv = copy / ".venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], env=_unmeasured(), check=True, timeout=300
        )
        python = venv / "bin" / "python"
        site = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            env=_unmeasured(), capture_output=True, text=True, check=True, timeout=60,
        ).stdout.strip()  # fmt: skip
        # The copy's src/ first; then this session's packages, their own .pth files read (its lowtide, installed
        # editable from the real checkout's src/, comes after the copy's and is never the one imported).
        (Path(site) / "_lowtide_copy.pth").write_text(
            f"{copy / 'src'}\nimport site; site.addsitedir({sysconfig.get_path('purelib')!r})\n"
        )
        script = venv / "bin" / "lowtide"
        script.write_text(f"#!{python}\nimport sys\nfrom lowtide.cli import main\nsys.exit(main())\n")
        script.chmod(0o755)
        imported = subprocess.run(
            [str(python), "-c", "import lowtide; print(lowtide.__file__)"],
            env=_unmeasured(), capture_output=True, text=True, check=True, timeout=60,
        ).stdout.strip()  # fmt: skip
        if not Path(imported).is_relative_to(copy):
            raise AssertionError(f"the copy's environment imports lowtide from {imported}, not from {copy}")
        return str(copy)

    @keyword("Run Robot Tests In The Copy")
    def run_robot_tests_in_the_copy(self, copy: str, suites: list[str], *tests: str) -> str:
        """`robot --test T ... SUITES` run by the copy's own Python in the copy; fails unless every test named ran and
        passed. Returns what robot printed."""
        folder = Path(copy)
        argv = [str(folder / ".venv" / "bin" / "python"), "-m", "robot", "--outputdir", str(folder / "build" / "robot")]
        argv += ["--consolewidth", "100", *(word for test in tests for word in ("--test", test)), *suites]
        done = subprocess.run(
            argv, cwd=folder, env=_unmeasured(), capture_output=True, text=True, timeout=1200, check=False
        )
        printed = done.stdout + done.stderr
        logger.info(f"{' '.join(argv)} in {folder}: rc {done.returncode}\n{printed}")
        expected = f"{len(tests)} test{'s' if len(tests) != 1 else ''}, {len(tests)} passed, 0 failed"
        if done.returncode != 0 or expected not in printed:
            raise AssertionError(f"robot in the copy: rc {done.returncode}, not '{expected}':\n{printed[-6000:]}")
        return printed

    @keyword("Remove The Copies")
    def remove_the_copies(self) -> None:
        for folder in self._folders:
            shutil.rmtree(folder, ignore_errors=True)
        self._folders.clear()


def _unmeasured() -> dict[str, str]:
    """This environment without coverage's variables: nothing run from the copy may be measured, as its files are
    not the checkout's (removed with the copy, they failed `coverage report`: "No source for code")."""
    return {name: value for name, value in os.environ.items() if not name.startswith("COVERAGE")}
