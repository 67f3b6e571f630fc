"""Steps of system_packages.feature: what the suite needs from the system, checked and installed
(`features/support/system_packages.py`) on systems described by a PATH of their own, whose apt-get, apt-cache and
sudo are scripts that write down how they were called."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Protocol

from _support import FEATURES, world
from step_context import Context as StepContext
from step_context import given, then, when
from system_packages import Host, ensure

CHECKOUT = FEATURES.parent
# What each fake package puts on the PATH: the commands, each a script printing what `--version` would.
PROVIDES = {
    "chromium": {"chromium": "Chromium 150"},
    "chromium-driver": {"chromedriver": "ChromeDriver 150"},
    "curl": {"curl": "curl 8"},
    "nodejs": {"node": "v20.19.2"},
    "npm": {"npm": "10.8.2"},
    "util-linux": {"setpriv": "setpriv 2.38", "runuser": "runuser 2.38"},
}
APT_GET = """#!/bin/sh
echo "apt-get $* (DEBIAN_FRONTEND=$DEBIAN_FRONTEND)" >> {calls}
case " $* " in *" install "*) ;; *) exit 0 ;; esac
[ -f {failure} ] && {{ {cat} {failure} >&2; exit 100; }}
for word in "$@"; do
  case "$word" in
    postgresql) {mkdir} -p {postgresql}/15/bin && printf '#!/bin/sh\\n' > {postgresql}/15/bin/postgres ;;
    -*|install|DPkg::*) ;;
    *) [ -d {packages}/"$word" ] && {cp} -p {packages}/"$word"/* {bin}/ ;;
  esac
done
"""
APT_CACHE = """#!/bin/sh
echo "apt-cache $*" >> {calls}
printf '%s:\\n  Installed: (none)\\n  Candidate: %s\\n' "$2" "$({cat} {candidates}/"$2" 2>/dev/null || echo 1.0)"
"""
SUDO = {
    "asks no password": '#!/bin/sh\necho "sudo $*" >> {calls}\nshift\nexec "$@"\n',
    "asks for a password": '#!/bin/sh\necho "sudo $*" >> {calls}\necho "sudo: a password is required" >&2\nexit 1\n',
}


class Context(StepContext, Protocol):
    system: Path
    """The described system's folder: bin/ (its PATH), postgresql/ (Debian's servers), calls.txt."""
    checked: tuple[int, str]
    """What the check (or the process) ended with, and what it printed."""


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _calls(context: Context, program: str) -> list[str]:
    """What `program` was called with, in order, each program named as on the PATH (apt-get is given by its path)."""
    calls = context.system / "calls.txt"
    lines = calls.read_text().replace(f"{context.system / 'bin'}/", "").splitlines() if calls.exists() else []
    return [line for line in lines if line.split(" ", 1)[0] == program]


@given("a fresh Debian system whose sudo {sudo}")
def step_fresh_debian(context: Context, sudo: str) -> None:
    """Nothing of what the suite needs, but the util-linux every Debian system has; apt-get installs from PROVIDES."""
    system = world(context).path("system")
    bin_, packages, candidates = system / "bin", system / "packages", system / "candidates"
    for folder in (bin_, packages, candidates, system / "postgresql"):
        folder.mkdir(parents=True)
    for package, commands in PROVIDES.items():
        (packages / package).mkdir()
        for command, version in commands.items():
            _script(packages / package / command, f"#!/bin/sh\necho '{version}'\n")
    (candidates / "nodejs").write_text("20.19.2+dfsg-1")
    names = {"calls": system / "calls.txt", "bin": bin_, "packages": packages, "postgresql": system / "postgresql"}
    tools = {tool: shutil.which(tool) for tool in ("cat", "cp", "mkdir")}  # the system's PATH has none of them
    _script(bin_ / "apt-get", APT_GET.format(**names, **tools, failure=system / "install-fails"))
    _script(bin_ / "apt-cache", APT_CACHE.format(**tools, calls=names["calls"], candidates=candidates))
    if sudo != "is not installed":
        _script(bin_ / "sudo", SUDO[sudo].format(calls=names["calls"]))
        for command in ("env", "true"):  # what sudo runs: `sudo -n true`, and apt-get through `env`
            (bin_ / command).symlink_to(str(shutil.which(command)))
    for command in PROVIDES["util-linux"]:
        shutil.copy2(packages / "util-linux" / command, bin_ / command)
    context.system = system


@given('its node is "{version}", its npm and curl are there, and apt-get\'s nodejs is "{candidate}"')
def step_old_node(context: Context, version: str, candidate: str) -> None:
    _script(context.system / "bin" / "node", f"#!/bin/sh\necho '{version}'\n")
    shutil.copy2(context.system / "packages" / "npm" / "npm", context.system / "bin" / "npm")
    shutil.copy2(context.system / "packages" / "curl" / "curl", context.system / "bin" / "curl")
    (context.system / "candidates" / "nodejs").write_text(candidate)


@given('apt-get\'s nodejs is "{candidate}"')
def step_node_candidate(context: Context, candidate: str) -> None:
    (context.system / "candidates" / "nodejs").write_text(candidate)


@given('its apt-get fails to install, saying "{said}"')
def step_apt_fails(context: Context, said: str) -> None:
    (context.system / "install-fails").write_text(f"Reading package lists...\n{said}\n")


@given("a system with none of what the suite needs, and no apt-get")
def step_bare_system(context: Context) -> None:
    context.system = world(context).path("bare")
    (context.system / "bin").mkdir(parents=True)
    (context.system / "postgresql").mkdir()


def _host(context: Context, *, root: bool) -> Host:
    return Host({"PATH": str(context.system / "bin")}, root=root, postgresql=context.system / "postgresql")


@when('{who} ensures what the sessions "{sessions}" need')
def step_ensure(context: Context, who: str, sessions: str) -> None:
    assert who in ("root", "a user who is not root"), who
    said = io.StringIO()
    code = ensure([s.strip() for s in sessions.split(",")], _host(context, root=who == "root"), said)
    context.checked = (code, said.getvalue())


@then('the check {ends}, having said only "{line}"')
def step_said_only(context: Context, ends: str, line: str) -> None:
    code, said = context.checked
    assert (code, said) == ({"succeeds": 0, "fails": 1}[ends], line + "\n"), context.checked


@then('the check {ends}, having said "{line}"')
def step_said(context: Context, ends: str, line: str) -> None:
    code, said = context.checked
    assert code == {"succeeds": 0, "fails": 1}[ends], context.checked
    assert line + "\n" in said, context.checked


@then("the check succeeds, having said nothing")
def step_said_nothing(context: Context) -> None:
    assert context.checked == (0, ""), context.checked


@then("the system's {program} was called as:")
def step_called_as(context: Context, program: str) -> None:
    assert _calls(context, program) == [row["call"] for row in context.table], _calls(context, program)


@then("the system's apt-get was called {count:d} times in all")
def step_called_times(context: Context, count: int) -> None:
    assert len(_calls(context, "apt-get")) == count, _calls(context, "apt-get")


@then("the system's apt-get was never called")
def step_never_called(context: Context) -> None:
    assert _calls(context, "apt-get") == [], _calls(context, "apt-get")


@then("neither the system's apt-get nor its sudo was called")
def step_nothing_called(context: Context) -> None:
    calls = context.system / "calls.txt"
    assert not calls.exists(), calls.read_text()


@then("the system now has {names}")
def step_now_has(context: Context, names: str) -> None:
    host = _host(context, root=True)
    for name in (n.strip() for n in names.split(",")):
        if name == "PostgreSQL's server":
            assert list(host.postgresql.glob("*/bin/postgres")), "no PostgreSQL server"
        else:
            assert host.which(name) is not None, f"{name} is not on the system's PATH"


@when('the check nox runs is run for "{sessions}" in a process of its own')
def step_check_process(context: Context, sessions: str) -> None:
    checker = FEATURES / "support" / "system_packages.py"
    env = {"PATH": str(context.system / "bin"), "LOWTIDE_PG_BIN": str(context.system / "postgresql")}
    done = subprocess.run(
        [sys.executable, str(checker), *sessions.split(", ")], env=env, capture_output=True, text=True, timeout=120
    )
    context.checked = (done.returncode, done.stdout + done.stderr)


@when('"nox {arguments}" runs with this checkout\'s noxfile on that system')
def step_nox(context: Context, arguments: str) -> None:
    """nox as the README runs it, from a folder of its own, on the described system: nothing of this test run's
    environment (nox's own mark that its check ran, above all) but the PATH and a home."""
    env = {"PATH": str(context.system / "bin"), "HOME": str(context.system), "LOWTIDE_PG_BIN": str(context.system)}
    command = [sys.executable, "-m", "nox", "--noxfile", str(CHECKOUT / "noxfile.py"), *arguments.split()]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=context.system)
    context.checked = (done.returncode, done.stdout + done.stderr)


@then('the process ends with {code:d}, having printed only "{line}"')
def step_process_printed_only(context: Context, code: int, line: str) -> None:
    assert context.checked == (code, line + "\n"), context.checked


@then('the process ends with {code:d}, having printed "{text}"')
def step_process_printed(context: Context, code: int, text: str) -> None:
    assert context.checked[0] == code, context.checked
    assert text in context.checked[1], context.checked


@then("no session started")
def step_no_session(context: Context) -> None:
    assert "Running session" not in context.checked[1], context.checked[1]


@then("nox started the session lint, having said nothing of what the system lacks")
def step_lint_started(context: Context) -> None:
    printed = context.checked[1]
    assert "Running session lint" in printed, printed
    assert "nox: " not in printed.replace("nox > ", ""), printed


@given("a copy of README.md and .ci/run, where python3 only writes down how it was called")
def step_ci_copy(context: Context) -> None:
    system = world(context).path("ci")
    (system / ".ci").mkdir(parents=True)
    (system / "bin").mkdir()
    shutil.copy2(CHECKOUT / "README.md", system / "README.md")
    shutil.copy2(CHECKOUT / ".ci" / "run", system / ".ci" / "run")
    _script(system / "bin" / "python3", f'#!/bin/sh\necho "python3 $*" >> {system / "calls.txt"}\nexit 1\n')
    context.system = system


@when(".ci/run runs there")
def step_ci_runs(context: Context) -> None:
    env = {**os.environ, "PATH": f"{context.system / 'bin'}:/usr/bin:/bin"}
    done = subprocess.run(
        ["bash", str(context.system / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=120
    )
    context.checked = (done.returncode, done.stdout + done.stderr)


@then("it ran the README's test command, printing it first")
def step_ci_ran_readme(context: Context) -> None:
    lines = (CHECKOUT / "README.md").read_text().splitlines()
    heading = next(n for n, line in enumerate(lines) if line.startswith("# 2. Run the whole test suite"))
    command = next(line for line in lines[heading + 1 :] if not line.startswith("#"))
    assert command == "python3 -m venv .venv && .venv/bin/pip install nox uv && .venv/bin/nox", command
    assert context.checked[1].startswith(f"+ {command}\n"), context.checked


@then('python3 was called as "{call}", and the command stopped there, as it would have for a reader')
def step_ci_python3(context: Context, call: str) -> None:
    assert _calls(context, "python3") == [call], _calls(context, "python3")
    assert context.checked[0] != 0, context.checked
