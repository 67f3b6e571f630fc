"""What the test suite needs from the system that pip cannot install, by nox session: found, or installed with apt-get
(as root, or through sudo when it asks no password), or said in one line with the command that installs it.

noxfile.py runs it once, before any session starts, for the sessions the run selected (a session absent from
`SESSIONS` needs nothing: `nox -s lint` looks for nothing and installs nothing):

    python features/support/system_packages.py robot postgres    # 0: all there, or installed; 1: said why not
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from postgres import DEBIAN, PostgresUnavailable, server_binaries  # features/support

__all__ = ["NEEDS", "SESSIONS", "Host", "Need", "ensure"]


@dataclass(frozen=True)
class Need:
    """One thing a session needs from the system, and the Debian package that provides it."""

    name: str
    """What the messages call it: the command, or "PostgreSQL's server"."""
    package: str
    minimum: int | None = None
    """The oldest major version that serves (`NAME --version`), if any: apt-get installs it only if its candidate is
    as new (Debian 12's nodejs is 18, the SDKs need 20)."""
    after: str | None = None
    """The need without which this one serves nothing (npm, without a node new enough): not installed without it."""
    as_root: bool = False
    """Needed only when the suite runs as root (it runs something as a user whom file modes stop)."""


NEEDS = {
    "postgres": Need("PostgreSQL's server", "postgresql"),
    "chromium": Need("chromium", "chromium"),
    "chromedriver": Need("chromedriver", "chromium-driver"),
    "node": Need("node", "nodejs", minimum=20),
    "npm": Need("npm", "npm", after="node"),
    "curl": Need("curl", "curl"),
    "setpriv": Need("setpriv", "util-linux", as_root=True),
    "runuser": Need("runuser", "util-linux", as_root=True),
}
"""Each need by its key (what each is for: README.md's Development section, whose table lists them all)."""
SESSIONS: dict[str, tuple[str, ...]] = {
    "robot": ("chromium", "chromedriver", "curl", "setpriv"),
    "postgres": ("postgres", "chromium", "chromedriver", "curl", "setpriv", "runuser"),
    "serve_clients": ("node", "npm", "curl"),
    "soak": ("postgres", "runuser"),
}
"""What each nox session needs (robot/dashboard.robot has a test tagged `postgres`: that session needs the browser
too; robot/readme_examples.robot runs the README's curl examples in both; the progress-timed soak's three hosts run on
a PostgreSQL cluster of the `soak` session's)."""
_QUIET = {"DEBIAN_FRONTEND": "noninteractive"}
_WAIT = ["-o", "DPkg::Lock::Timeout=600"]
"""apt-get waits for a lock another holds (a fresh machine's unattended-upgrades, another checkout's nox), instead of
failing at once."""
_NEWER = "https://nodejs.org/en/download"


@dataclass(frozen=True)
class Host:
    """The system looked at: the environment (its PATH, `LOWTIDE_PG_BIN`), whether this user is root, and where
    Debian puts PostgreSQL's servers. `Host.here()` is this one; the scenarios describe others."""

    environ: Mapping[str, str]
    root: bool
    postgresql: Path = DEBIAN

    @classmethod
    def here(cls) -> Host:
        return cls(dict(os.environ), os.geteuid() == 0)

    def which(self, command: str) -> str | None:
        return shutil.which(command, path=self.environ.get("PATH", os.defpath))

    def run(self, argv: Sequence[str], extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """A command, its output kept (apt-get says nothing unless it fails); never a prompt (stdin is empty)."""
        return subprocess.run(
            list(argv), capture_output=True, text=True, env={**self.environ, **(extra or {})},
            stdin=subprocess.DEVNULL, timeout=1800, check=False,
        )  # fmt: skip


def ensure(sessions: Iterable[str], host: Host, out: TextIO) -> int:
    """Find what `sessions` need; install what is missing with apt-get where this user may. 0 when all is there at
    the end; else 1, after one line on `out` saying what is missing and the command that installs it. Runs nothing
    (apt-get least of all) when all is there."""
    sessions = list(dict.fromkeys(sessions))
    names = dict.fromkeys(name for session in sessions for name in SESSIONS.get(session, ()))
    needs = [NEEDS[name] for name in names if host.root or not NEEDS[name].as_root]
    lacking = _lacking(needs, host)
    if not lacking:
        return 0
    who = _who(sessions, lacking)
    apt = _apt(host)
    if isinstance(apt, str):
        return _say(out, _cannot(who, lacking, apt, host))
    updated = host.run([*apt, *_WAIT, "update", "-qq"], _QUIET)
    if updated.returncode != 0:
        return _say(out, _failed(who, lacking, "update", updated))
    packages = _installable(lacking, host)
    if packages:
        print(f"nox: installing {' '.join(packages)} with apt-get: {who} them", file=out, flush=True)
        done = host.run([*apt, *_WAIT, "install", "-y", "-qq", "--no-install-recommends", *packages], _QUIET)
        if done.returncode != 0:
            return _say(out, _failed(who, lacking, f"install {' '.join(packages)}", done))
    still = _lacking(needs, host)
    if still:
        why = "apt-get has none new enough" if all(need.minimum for need in still) else "apt-get did not provide it"
        return _say(out, _cannot(who, still, why, host))
    return 0


def _lacking(needs: Iterable[Need], host: Host) -> dict[Need, str]:
    """Each need not met, with the version found, too old ("" when nothing was found)."""
    lacking: dict[Need, str] = {}
    for need in needs:
        found = _unmet(need, host)
        if found is not None:
            lacking[need] = found
    return lacking


def _unmet(need: Need, host: Host) -> str | None:
    """None when `need` is met; else "" (nothing found) or the version found, too old."""
    if need.package == "postgresql":
        try:
            found = (server_binaries(host.environ, host.postgresql) / "postgres").exists()
        except PostgresUnavailable:
            found = False
        return None if found else ""
    command = host.which(need.name)
    if command is None:
        return ""
    if need.minimum is None:
        return None
    version = host.run([command, "--version"]).stdout.strip()
    return None if _major(version) >= need.minimum else version


def _major(version: str) -> int:
    """The major version of "v20.20.2" or "18.19.0+dfsg-6~deb12u2" (an epoch, "1:", skipped); 0 when none."""
    found = re.match(r"(?:\d+:)?v?(\d+)", version)
    return int(found.group(1)) if found else 0


def _apt(host: Host) -> list[str] | str:
    """How this user runs apt-get (as root; else through sudo, if it asks no password), or why it cannot."""
    apt = host.which("apt-get")
    if apt is None:
        return "this system has no apt-get"
    if host.root:
        return [apt]
    sudo = host.which("sudo")
    if sudo is None:
        return "not root, and no sudo"
    if host.run([sudo, "-n", "true"]).returncode != 0:
        return "not root, and sudo asks for a password"
    return [sudo, "-n", "env", *(f"{name}={value}" for name, value in _QUIET.items()), apt]  # sudo drops the rest


def _installable(lacking: Mapping[Need, str], host: Host) -> list[str]:
    """The packages to install: each lacking need's, but not one whose apt-get candidate is older than its need's
    `minimum` (nor the packages that come `after` it)."""
    apt_cache = host.which("apt-cache")
    too_old: set[str] = set()
    for need in lacking:
        if need.minimum is not None:
            policy = host.run([apt_cache, "policy", need.package]).stdout if apt_cache else ""
            candidate = re.search(r"Candidate:\s*(\S+)", policy)
            if candidate is None or _major(candidate.group(1)) < need.minimum:
                too_old.add(need.name)
    return list(dict.fromkeys(need.package for need in lacking if not {need.name, need.after} & too_old))


def _who(sessions: Sequence[str], lacking: Mapping[Need, str]) -> str:
    """ "session robot needs" or "sessions robot, postgres need": the selected sessions that need what is lacking."""
    named = {need.name for need in lacking}
    who = [session for session in sessions if named & {NEEDS[name].name for name in SESSIONS.get(session, ())}]
    return f"session {who[0]} needs" if len(who) == 1 else f"sessions {', '.join(who)} need"


def _cannot(who: str, lacking: Mapping[Need, str], why: str, host: Host) -> str:
    """One line: what is missing, why it was not installed, and the commands that install it."""
    newer = {need.name for need in lacking if need.minimum is not None}
    packages = list(dict.fromkeys(need.package for need in lacking if not {need.name, need.after} & newer))
    apt = host.which("apt-get") is not None
    sudo = apt and not host.root and host.which("sudo") is not None
    fixes: list[str] = []
    if packages:
        fixes.append(f"{'sudo ' if sudo else ''}apt-get install -y --no-install-recommends {' '.join(packages)}")
    for need in lacking:
        if need.minimum is not None:
            coming = "".join(f" with {other.name}" for other in lacking if other.after == need.name)
            fixes.append(f"{need.name} {need.minimum} or newer{coming} from {_NEWER}")
    how = "Install" if host.root or sudo else "Install, as root"
    how = how if apt else "Install (Debian's packages, as root)"
    return f"nox: {who} {_described(lacking)}, not installed here ({why}). {how}: {'; '.join(fixes)}"


def _failed(who: str, lacking: Mapping[Need, str], step: str, done: subprocess.CompletedProcess[str]) -> str:
    """One line: what is missing, and the apt-get step that failed with the last thing it said."""
    said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    last = said[-1] if said else "it said nothing"
    return f"nox: {who} {_described(lacking)}; apt-get {step} failed (exit {done.returncode}): {last}"


def _described(lacking: Mapping[Need, str]) -> str:
    """ "chromium, node 20 or newer (found v18.19.0)"."""
    named: list[str] = []
    for need, found in lacking.items():
        if need.minimum is None:
            named.append(need.name)
        else:
            named.append(f"{need.name} {need.minimum} or newer" + (f" (found {found})" if found else ""))
    return ", ".join(named)


def _say(out: TextIO, line: str) -> int:
    print(line, file=out, flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(ensure(sys.argv[1:], Host.here(), sys.stderr))
