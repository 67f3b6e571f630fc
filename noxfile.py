"""Checks and test sessions. `nox` with no arguments runs them all, three at a time (`nox.options.parallel`): behave,
robot, postgres, types, the integrations' scenarios (pydantic_ai, langchain: each with its framework, pinned),
serve_clients (`lowtide serve` with the official TypeScript SDKs under node, and curl), lint; then coverage_report.
`nox -s quick`, not among them, is what to run before every commit (ruff, pyright over src/, a fast subset of the
feature files); docs/testing.md says what each session runs and where the suite's time goes.

Before any session starts, what the selected sessions need from the system that pip cannot install (PostgreSQL's
server, Chromium and its driver, node and npm, curl) is looked for, and what is missing installed with apt-get (as
root, or through sudo when it asks no password); where it cannot be, nox ends, having said in one line what is missing
and the command that installs it (`_ensure_system_packages`, `features/support/system_packages.py`). `nox -s lint` or
`nox -s types` needs none of it, and looks for none.

`nox -s postgres` runs the scenarios tagged `@postgres`, the ledger's own scenarios (tagged `@stores`) again with a
PostgreSQL database as their ledger, and the Robot tests tagged `postgres`, against a throwaway PostgreSQL cluster of
their own (`features/support/postgres.py`). The `behave` and `robot` sessions leave those out, so nothing else needs
PostgreSQL.

`nox -s soak` runs the random-kill soak and the progress-timed soak (three hosts on PostgreSQL among its variants) for
200 rounds of each kind (`docs/reliability.md`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import nox

# Python writes the bytecode of what it imports (into each session's venv and src/), whatever the machine says: with
# PYTHONDONTWRITEBYTECODE set (as on CI), every one of the suites' hundreds of Python processes (behave's, robot's, the
# `lowtide` commands and clients they start) compiled lowtide and the SDKs it imports from source again, 1 to 2 s of
# CPU each (a third of the CPU of features/public_api.feature and telemetry.feature, which start such processes).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
# Three sessions at a time (`nox -j 1` for one): a session's output is shown whole when it ends. The three longest
# start at once (behave, robot, postgres); coverage_report alone, once every other has ended (`allow_parallel=False`).
# Most of the suites' time is spent waiting on processes, sockets, batches and rate limits. Two at a time, postgres (one
# behave process, 14 minutes) started only when behave or robot ended, and ran its last minutes beside the short
# sessions with one core idle: 35 minutes on a quiet two-core machine for 50 of CPU. Each session's coverage and
# fallback ledger are its own (`_measure`, `_contain_ledger`).
# The short sessions follow, the longest first (measured 29 November, at a load of 4 to 12: lowest 5 minutes of wall,
# 92 s of CPU in one process, and it ended the suite alone, 2 minutes after the others; langchain 3 minutes; types'
# pyright 114 s of CPU; pydantic_ai 55; serve_clients and lint shorter), so that the last to start is a short one.
nox.options.parallel = 3
nox.options.allow_parallel = True
nox.options.sessions = [
    "behave",
    "robot",
    "postgres",
    "lowest",
    "types",
    "langchain",
    "pydantic_ai",
    "serve_clients",
    "installs",
    "lint",
    "coverage_report",
]

# The OpenTelemetry SDK and its wire format: the telemetry scenarios read lowtide's spans and metrics in memory, and
# over OTLP from a receiver of their own; lowtide itself installs only the API (`lowtide[otel]`).
OTEL = ["opentelemetry-sdk>=1.27,<2", "opentelemetry-exporter-otlp-proto-http>=1.27,<2", "opentelemetry-proto>=1.27,<2"]
# selenium drives Debian's chromium and chromedriver (on PATH) in the dashboard's suite: no browser is downloaded.
# msoffcrypto-tool saves an office file under a password as Office does (features/office_documents.feature).
TEST_DEPS = [
    "behave>=1.2.6", "robotframework>=7", "coverage[toml]>=7.10", "selenium>=4.20", "msoffcrypto-tool>=5.4", *OTEL
]  # fmt: skip
# The frameworks the integrations' scenarios run against: their current releases, pinned.
PYDANTIC_AI = "pydantic-ai-slim==2.68.0"
LANGCHAIN = "langchain-core==1.7.2"
# LangChain's standard tests for chat models, run by the `langchain` session against lowtide's (with pytest: its kit).
LANGCHAIN_TESTS = "langchain-tests==1.1.9"
# Robot suites run side by side (pabot), this many at a time: on two cores they wait far more than they compute.
PABOT = "robotframework-pabot==5.2.2"
ROBOT_PROCESSES = "3"
# Behave's feature files run side by side in this many processes (the default run; `_behave_side_by_side`), each
# taking the next file when free, the longest first by the CPU seconds each took in a full run
# (`features/feature-seconds.txt`, made by `features/support/feature_seconds.py --cpu` from the suite clock's lines:
# remake it when a file's time changes much; a file it lacks is guessed from its size).
BEHAVE_PROCESSES = 3
FEATURE_SECONDS = Path("features/feature-seconds.txt")
RESULTS = Path("build/test-results").absolute()
# Each test session's coverage data, a folder each (`_measure`), combined by `coverage_report`.
COVERAGE_DATA = Path("build/coverage").absolute()
# The README's examples that need a framework run in that framework's session (the rest: robot/readme_examples.robot).
README_EXAMPLES = "features/integrations/readme_examples.feature"
# Only folders that exist: git keeps no empty folder, so a fresh clone may lack one.
# Every provider's SDK: the test sessions run each provider's actors against the emulator.
PROVIDERS = "gemini,bedrock,mistral,groq,together,fireworks,vertex"
# The office-file converter (markitdown): every session whose scenarios send Word, Excel or PowerPoint files.
DOCUMENTS = "documents"
PYTHON_PATHS = [p for p in ("src", "features", "robot", "benchmarks", "noxfile.py") if Path(p).exists()]


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint rules and formatting."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", *PYTHON_PATHS)
    session.run("ruff", "format", "--check", *PYTHON_PATHS)


@nox.session
def types(session: nox.Session) -> None:
    """pyright over src/ (strict) and over the test code, features/ and robot/'s libraries (basic; [tool.pyright] in
    pyproject.toml), with the integrations' frameworks and the test tools installed so that they type-check too."""
    session.install(
        "-e", f".[otel,pydantic-ai,langchain,postgres,{DOCUMENTS},{PROVIDERS}]", *TEST_DEPS, "pyright>=1.1.390",
        "pytest>=8",
        LANGCHAIN_TESTS,
    )  # fmt: skip
    session.run("pyright")


# `nox -s quick`'s scenarios: in-process (no PostgreSQL, no browser, no Python subprocess), chosen by measured CPU
# seconds to touch every layer (docs/testing.md says which file stands for which, and what each cost).
QUICK_FEATURES = [
    "features/configuration.feature",
    "features/plain_prompts.feature",
    "features/call_arguments.feature",
    "features/batch_provider.feature",
    "features/exactly_once.feature",
    "features/memory_ledger.feature",
    "features/ledger_identity.feature",
    "features/cost.feature",
    "features/named_errors.feature",
    "features/registry.feature",
    "features/import_cycles.feature",
    "features/emulator_models.feature",
    "features/bulk_inputs.feature",
    "features/serve.feature",
]


@nox.session
def quick(session: nox.Session) -> None:
    """What a developer runs before every commit, under 3 minutes on a quiet two-core machine: ruff, pyright over
    src/ (strict), and QUICK_FEATURES, a fast subset of the behave scenarios that touches every layer, with pyright and
    behave side by side (a core each). Not among the default sessions: `nox` runs all of it, and more, in lint, types
    and behave. posargs: other feature files instead of QUICK_FEATURES."""
    # What pyright reads src/ against, as the types session: the integrations' frameworks, psycopg, every SDK.
    session.install(
        "-e",
        f".[otel,pydantic-ai,langchain,postgres,{DOCUMENTS},{PROVIDERS}]",
        *TEST_DEPS,
        "pyright>=1.1.390",
        "ruff>=0.6",
    )
    _contain_ledger(session)
    if session.run("ruff", "check", *PYTHON_PATHS) is None:
        return  # `--install-only`: nox ran nothing, so neither is behave started
    session.run("ruff", "format", "--check", *PYTHON_PATHS)
    env = {**os.environ, **{key: value for key, value in session.env.items() if value is not None}}
    log = Path("build/quick-behave.log").absolute()
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [str(Path(session.bin) / "behave"), "--format", "progress", *(session.posargs or QUICK_FEATURES)]
    with log.open("wb") as out:
        behave = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        session.run("pyright", "src")
    finally:
        failed = behave.wait() != 0
        session.log(f"behave {' '.join(session.posargs or QUICK_FEATURES)}:")
        print(log.read_text(errors="replace"), flush=True)
    if failed:
        session.error("behave failed (build/quick-behave.log)")


@nox.session
def behave(session: nox.Session) -> None:
    """Behave scenarios, measured by coverage (into a folder of the session's, emptied first: `_measure`); not those
    tagged `@postgres` (`default_tags` in pyproject.toml). With no posargs the feature files run in BEHAVE_PROCESSES
    processes side by side (most scenarios wait on sockets, processes and clocks far more than they compute); with
    posargs, in one. nox itself too: `features/system_packages.feature` runs this noxfile on systems it describes."""
    session.install("-e", f".[otel,{DOCUMENTS},{PROVIDERS}]", *TEST_DEPS, "nox")
    _contain_ledger(session)
    _measure(session)
    junit = ["--format", "progress", "--junit", "--junit-directory", f"{RESULTS}/behave"]
    if session.posargs:
        session.run("coverage", "run", "-p", "-m", "behave", *junit, *session.posargs)
        return
    _behave_side_by_side(session, junit)


def _behave_side_by_side(session: nox.Session, junit: list[str]) -> None:
    """Every top-level feature file, run by BEHAVE_PROCESSES behave processes side by side, each taking the next file
    from one queue when it has finished its last, the longest first (`_longest_first`,
    `features/support/feature_queue.py`); each with a ledger of its own for tests that forget to choose one; their
    output shown once all have ended, and the session failed if any failed."""
    features = sorted(Path("features").glob("*.feature"))
    _side_by_side(session, "behave", _queued("behave", features, junit, BEHAVE_PROCESSES))


def _queued(
    name: str, features: list[Path], junit: list[str], processes: int, *, measured: bool = True
) -> dict[str, list[str]]:
    """`processes` behave commands (for `_side_by_side`) that take `features` from one queue, the longest first;
    under coverage unless not `measured`."""
    queue = Path(f"build/{name}-processes/queue").absolute()
    queue.parent.mkdir(parents=True, exist_ok=True)
    queue.write_text("".join(f"{feature}\n" for feature in _longest_first(features)))
    Path(f"{queue}.taken").unlink(missing_ok=True)
    taker = ["features/support/feature_queue.py", str(queue)]
    runner = ["coverage", "run", "-p"] if measured else ["python"]
    return {f"{name}-{index}": [*runner, *taker, *junit] for index in range(processes)}


def _side_by_side(session: nox.Session, name: str, commands: dict[str, list[str]]) -> None:
    """Run the commands (programs of the session's venv) at once, each with a fallback ledger of its own for tests
    that forget to choose one and its output in build/<name>-processes/<key>.log; show each output once all have
    ended, each with the wall and CPU seconds it took (its children's included: docs/testing.md reads them), and fail
    the session if any failed."""
    logs = Path(f"build/{name}-processes").absolute()
    logs.mkdir(parents=True, exist_ok=True)
    for old in logs.glob("*.log"):
        old.unlink()
    running: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    for key, command in commands.items():
        env = {**os.environ, **{k: value for k, value in session.env.items() if value is not None}}
        for unset in [k for k, value in session.env.items() if value is None]:
            env.pop(unset, None)
        env["LOWTIDE_LEDGER"] = str(Path(f"build/test-ledger/{key}/ledger.sqlite3").absolute())
        log = logs / f"{key}.log"
        program = [str(Path(session.bin) / command[0]), *command[1:]]
        with log.open("wb") as out:
            running.append((key, subprocess.Popen(program, stdout=out, stderr=subprocess.STDOUT, env=env), log))
    started = time.monotonic()
    took: dict[str, str] = {}

    def reap(key: str, process: subprocess.Popen[bytes]) -> None:
        # os.wait4 gives the process's resource use, with that of every descendant it waited for (the `lowtide`
        # processes its scenarios start; not a PostgreSQL server, which pg_ctl leaves to run on its own).
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        took[key] = f"{time.monotonic() - started:.0f} s of wall, {cpu:.0f} s of CPU"

    reapers = [threading.Thread(target=reap, args=(key, process)) for key, process, _ in running]
    for reaper in reapers:
        reaper.start()
    for reaper in reapers:
        reaper.join()
    failed = [key for key, process, _ in running if process.returncode != 0]
    for key, _, log in running:
        session.log(f"{key} ({took[key]}):")
        print(log.read_text(errors="replace"), flush=True)
    if failed:
        session.error(f"{name} failed in {', '.join(failed)} (build/{name}-processes/)")


def _longest_first(features: list[Path]) -> list[Path]:
    """The feature files, the longest first. A file's time is what FEATURE_SECONDS says it took (a file it does not
    know: as long as that many bytes of the files it knows took): the longest started last would keep the session
    waiting on it alone."""
    known: dict[str, float] = {}
    for line in FEATURE_SECONDS.read_text().splitlines() if FEATURE_SECONDS.exists() else []:
        if line.strip() and not line.startswith("#"):
            took, name = line.split(maxsplit=1)
            known[name.strip()] = float(took)
    listed = [feature for feature in features if feature.name in known]
    per_byte = sum(known[f.name] for f in listed) / max(1, sum(f.stat().st_size for f in listed)) or 1.0

    def seconds(feature: Path) -> float:
        return known.get(feature.name, feature.stat().st_size * per_byte)

    return sorted(features, key=lambda feature: (-seconds(feature), feature.name))


@nox.session
def robot(session: nox.Session) -> None:
    """Robot Framework suites over real processes and sockets, measured by coverage (subprocesses included).

    The suites run side by side, ROBOT_PROCESSES at a time (pabot: each suite one `robot` process; the whole of robot/
    the longest first, as robot/pabot-order.txt lists them): most of their time is spent waiting on batches, leases
    and rate limits, not computing. Robot resolves a relative --xunit path inside --outputdir, hence the absolute
    RESULTS. Suites tagged `serve-client` need node and the TypeScript SDKs: the `serve_clients` session runs them;
    those tagged `long` run in the `soak` session.
    """
    session.install("-e", f".[otel,{DOCUMENTS},{PROVIDERS}]", *TEST_DEPS, PABOT)
    _contain_ledger(session)
    _measure(session)
    # The order names the suites as children of robot/ (`Robot.Cli`): given other paths (one suite's file: its suite
    # is the top one, `Cli`), pabot handed robot `--suite Robot.Cli`, which matched nothing, and the session failed.
    ordering = [] if session.posargs else ["--ordering", "robot/pabot-order.txt"]
    session.run(
        "pabot", "--processes", ROBOT_PROCESSES, "--no-pabotlib", *ordering,
        "--command", "coverage", "run", "-p", "-m", "robot", "--end-command",
        "--exclude", "postgres", "--exclude", "serve-client", "--exclude", "long",
        "--outputdir", "build/robot", "--xunit", f"{RESULTS}/robot.xml", "--consolewidth", "100", *_suite_clock(),
        *(session.posargs or ["robot"]),
    )  # fmt: skip


def _suite_clock() -> list[str]:
    """Robot's listener that writes each suite's wall and CPU seconds, when LOWTIDE_SUITE_TIMES names a folder
    (features/support/clock.py; docs/testing.md)."""
    return ["--listener", "robot/resources/suite_clock.py"] if os.environ.get("LOWTIDE_SUITE_TIMES") else []


def _tagged(tag: str) -> list[str]:
    """The feature files (any folder under features/) in which `tag` appears: given `features/` whole, a behave that
    runs 10 of its 123 files still read every one and matched each skipped scenario's steps, 6 s of CPU under
    coverage."""
    return sorted(str(path) for path in Path("features").rglob("*.feature") if tag in path.read_text())


@nox.session
def postgres(session: nox.Session) -> None:
    """The PostgreSQL ledger's scenarios (`@postgres`), the ledger's scenarios (`@stores`, not `@sqlite`) on a
    PostgreSQL database, and Robot tests (tag `postgres`, not `long`: the progress-timed soak's three hosts run a few
    rounds here, 200 in the `soak` session), with `lowtide[postgres]`: the three side by side, each on a throwaway
    cluster it starts and removes. posargs: the feature files (default: every feature naming the part's tag)."""
    session.install("-e", f".[otel,postgres,{DOCUMENTS},{PROVIDERS}]", *TEST_DEPS)
    _contain_ledger(session)
    _measure(session)
    # The three parts run side by side, each with a cluster of its own (a free port each): one after another, the
    # session took 14 minutes (its Robot tests 6.5 of them, the README's examples on PostgreSQL 3) and ran on alone.
    _side_by_side(session, "postgres", {
        "postgres-scenarios": [
            "coverage", "run", "-p", "-m", "behave", "--tags=@postgres and not @long",
            "--format", "progress", "--junit", "--junit-directory", f"{RESULTS}/postgres",
            *(session.posargs or _tagged("@postgres")),
        ],
        **_stores_on_postgres(session),
        "postgres-robot": [
            "coverage", "run", "-p", "-m", "robot", "--include", "postgres", "--exclude", "long",
            "--outputdir", "build/robot-postgres", "--xunit", f"{RESULTS}/robot-postgres.xml", "--consolewidth", "100",
            "robot",
        ],
    })  # fmt: skip


def _stores_on_postgres(session: nox.Session) -> dict[str, list[str]]:
    """The `@stores` scenarios on PostgreSQL, in one process. In two taking the files from one queue (a cluster each),
    deadlines.feature hung on PostgreSQL in three full runs of four (29 November), a scenario each time with many calls
    at once: the server had answered the poller's COMMIT (its session idle, reading from its client), and the task
    awaiting it was never woken (docs/testing.md). In one process it never has: one, until that is understood."""
    options = ["-D", "store=postgres", "--tags=@stores and not @sqlite", "--format", "progress", "--junit",
               "--junit-directory", f"{RESULTS}/postgres-stores"]  # fmt: skip
    return {
        "postgres-stores": ["coverage", "run", "-p", "-m", "behave", *options, *(session.posargs or _tagged("@stores"))]
    }


@nox.session(name="serve_clients")
def serve_clients(session: nox.Session) -> None:
    """`lowtide serve` over a socket, in front of `lowtide emulator`, with the official TypeScript SDKs (pinned in
    robot/clients/package.json, installed by npm into build/serve-clients beside copies of the client programs)
    under node, and curl: `robot/serve_clients.robot`, measured by coverage."""
    clients = Path("build/serve-clients").absolute()
    clients.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "client.mjs", "curl.sh"):
        shutil.copyfile(Path("robot/clients") / name, clients / name)
    # The SDKs' versions are pinned: npm's cached metadata serves them without asking the registry whether it is
    # stale (a fresh install: 6.2 s of CPU and 15 s of wall against 7.1 and 18; with node_modules in place, 1 s).
    session.run(
        "npm", "install", "--prefix", str(clients), "--no-audit", "--no-fund", "--no-package-lock", "--prefer-offline",
        external=True,
    )  # fmt: skip
    session.install("-e", f".[otel,{PROVIDERS}]", *TEST_DEPS)  # the tidegem plugin's server speaks Gemini's wire
    _contain_ledger(session)
    _measure(session)
    session.run(
        "coverage", "run", "-p", "-m", "robot",
        "--outputdir", "build/robot-serve-clients", "--xunit", f"{RESULTS}/serve_clients.xml",
        "--consolewidth", "100", "--include", "serve-client", "--variable", f"CLIENTS_DIR:{clients}",
        *(session.posargs or ["robot/serve_clients.robot"]),
    )  # fmt: skip


@nox.session(name="pydantic_ai")
def pydantic_ai(session: nox.Session) -> None:
    """pydantic-ai agents over lowtide's model (`features/integrations/pydantic_ai*.feature`: Anthropic, Gemini, Groq,
    Together, Mistral, Azure OpenAI and Bedrock actors; streaming; pydantic-ai's documented examples), measured by
    coverage."""
    _integration(session, "pydantic-ai", PYDANTIC_AI, "pydantic_ai")


@nox.session
def langchain(session: nox.Session) -> None:
    """LangChain over lowtide's chat model (`features/integrations/langchain*.feature`: Anthropic, Gemini, Groq,
    Together, Mistral, Azure OpenAI and Bedrock actors; streaming), and LangChain's own standard tests
    (`features/integrations/langchain_kit/`), measured by coverage."""
    _integration(session, "langchain", LANGCHAIN, "langchain")
    if not session.posargs:
        session.install(LANGCHAIN_TESTS, LANGCHAIN)
        session.run(
            "coverage", "run", "-p", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--benchmark-disable",
            "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function", "-rsx",
            "--junitxml", f"{RESULTS}/langchain/standard_tests.xml", "features/integrations/langchain_kit",
        )  # fmt: skip


# The provider SDKs whose lowest allowed releases the `lowest` session installs (their requirements in pyproject.toml).
PROVIDER_SDKS = (
    "anthropic", "openai", "google-genai", "google-cloud-storage", "google-auth", "boto3", "mistralai", "groq",
    "together",
)  # fmt: skip
# The feature files that call the providers through their SDKs, run again on each SDK's lowest allowed release.
LOWEST_FEATURES = (
    "anthropic_*", "openai_*", "azure_openai_*", "gemini_*", "bedrock_*", "mistral_*", "groq_*", "together_*",
    "openrouter*", "serve*", "streaming*", "emulator_*", "batch_provider*", "live_provider*", "api_errors*",
    "compat_*", "vertex_*",
)  # fmt: skip
# The lowest session's provider files run in this many processes (its frameworks' scenarios in one more beside them).
LOWEST_PROCESSES = 2
LOWEST_INTEGRATIONS = [
    "features/integrations/pydantic_ai_gemini.feature",
    "features/integrations/langchain_gemini.feature",
]


@nox.session
def lowest(session: nox.Session) -> None:
    """The providers' scenarios (each provider's live and batch files, serve, streaming, the emulator; both frameworks
    over a Gemini actor, in a second behave run: the integrations have steps of their own) with every provider SDK at
    the lowest release its requirement allows (`_lowest_sdks`: google-genai 2.18, a 2.x). Not measured by coverage:
    combined with the other sessions' data, its own added not one line or branch (the run of 29 November: 44,712
    lines and 10,334 branches with it and without), and coverage cost a third of its 157 s of CPU."""
    session.install("uv>=0.5")
    sdks = _lowest_sdks(session)
    session.install(
        "-e", f".[pydantic-ai,langchain,{DOCUMENTS},{PROVIDERS}]", PYDANTIC_AI, LANGCHAIN, *sdks, *TEST_DEPS
    )
    _contain_ledger(session)
    junit = ["--format", "progress", "--junit", "--junit-directory", f"{RESULTS}/{session.name}"]
    if session.posargs:
        session.run("python", "-m", "behave", *junit, *session.posargs)
        return
    features = sorted({path for pattern in LOWEST_FEATURES for path in Path("features").glob(f"{pattern}.feature")})
    # Side by side, as the behave session's files: one process took 4.5 minutes and ended the suite alone.
    frameworks = ["python", "-m", "behave", "--tags=@pydantic_ai or @langchain", *junit]
    _side_by_side(session, "lowest", {
        **_queued("lowest", features, junit, LOWEST_PROCESSES, measured=False),
        "lowest-frameworks": [*frameworks, *LOWEST_INTEGRATIONS],
    })  # fmt: skip


def _lowest_sdks(session: nox.Session) -> list[str]:
    """Each of PROVIDER_SDKS pinned at the lowest release its requirement in pyproject.toml allows (`uv pip compile
    --resolution lowest-direct`: a floor with no release of its own, `together>=3.1`, is the first release above it)."""
    import tomllib

    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    stated = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    wanted = [r for r in stated if r.split("[")[0].split(">")[0].split("=")[0].strip() in PROVIDER_SDKS]
    given = "\n".join(r.split("#")[0].strip() for r in wanted) + "\n"
    uv = str(Path(session.bin) / "uv")
    command = [uv, "pip", "compile", "-", "--quiet", "--no-header", "--no-annotate", "--resolution", "lowest-direct"]
    pinned = subprocess.run(command, input=given, capture_output=True, text=True, check=True).stdout.splitlines()
    sdks = [line for line in pinned if line.split("==")[0] in PROVIDER_SDKS]
    session.log(f"lowest allowed provider SDKs: {', '.join(sdks)}")
    return sdks


@nox.session
def installs(session: nox.Session) -> None:
    """lowtide with every provider's and framework's extra resolved beside pydantic-ai-slim's provider extras and
    langchain-anthropic, -openai and -google-genai at their current releases (`features/support/framework_installs.py`:
    uv's cache first, the index when the cache cannot answer); a conflict fails with uv's explanation."""
    session.install("uv>=0.5")
    session.run("python", "features/support/framework_installs.py", "--uv", str(Path(session.bin) / "uv"))


def _integration(session: nox.Session, extra: str, pin: str, name: str) -> None:
    """An integration's scenarios, tagged `@<name>`: the default `behave` run skips them (`default_tags`). Every
    provider's SDK is installed beside the framework: its scenarios run other providers' actors too."""
    session.install("-e", f".[{extra},{PROVIDERS}]", pin, *TEST_DEPS)
    _contain_ledger(session)
    _measure(session)
    session.run(
        "coverage", "run", "-p", "-m", "behave", f"--tags=@{name}",
        "--format", "progress", "--junit", "--junit-directory", f"{RESULTS}/{name}",
        *(session.posargs or [f"features/integrations/{name}.feature", f"features/integrations/{name}_gemini.feature",
                              f"features/integrations/{name}_providers.feature",
                              f"features/integrations/{name}_stream.feature",
                              *map(str, Path("features/integrations").glob(f"{name}_durable.feature")),
                              *map(str, Path("features/integrations").glob(f"{name}_examples.feature")),
                              README_EXAMPLES]),
    )  # fmt: skip


@nox.session
def soak(session: nox.Session) -> None:
    """The soaks, long: the random-kill soak's 200 rounds each of one and of two processes, for every provider's batch
    API, and the progress-timed soak's 200 rounds of each variant (two providers per process; three hosts on one
    PostgreSQL ledger, on a throwaway cluster, so the PostgreSQL server must be installed). ROUNDS, PROVIDER_ROUNDS
    (random_kill_soak.robot's OpenAI and Gemini tests, one round in the `robot` session), SEED: posargs override;
    `-- --test "*PostgreSQL*"` runs one test. Then the scenarios tagged `@long` (the postgres session leaves them)."""
    session.install("-e", f".[otel,postgres,{DOCUMENTS},{PROVIDERS}]", *TEST_DEPS)
    _contain_ledger(session)
    session.run(
        "robot", "--outputdir", "build/soak", "--consolewidth", "100",
        "--variable", "ROUNDS:200", "--variable", "PROVIDER_ROUNDS:200", "--variable", "SEED:lowtide-soak",
        "--variable", "TEST_TIMEOUT:8 hours", *session.posargs,
        "robot/random_kill_soak.robot", "robot/progress_kill_soak.robot",
    )  # fmt: skip
    # The long scenarios (`@long`: agents_cli.feature's 100 runs killed at random on PostgreSQL, among them).
    session.run("behave", "--tags=@long", "--format", "progress", *_tagged("@long"))


# The official SDKs' generated tests (`nox -s sdk_tests`, not run by default): what their source distributions'
# test suites need, and the modules of the resources the emulator serves (features/sdk_tests/lowtide_sdk_pass.py).
SDK_TEST_DEPS = [
    "pip", "pytest>=8", "pytest-asyncio>=0.24", "respx>=0.22", "time-machine>=2.16", "dirty-equals>=0.6",
    "inline-snapshot>=0.28", "http-snapshot[httpx]==0.1.9", "hypothesis>=6", "anthropic[aiohttp]", "openai[aiohttp]",
]  # fmt: skip
SDK_TEST_MODULES = {
    "anthropic": [
        "test_messages.py", "messages/test_batches.py", "test_models.py", "test_files.py", "beta/test_files.py",
        "beta/test_models.py", "beta/messages/test_batches.py",
    ],
    "openai": [
        "test_batches.py", "test_files.py", "test_models.py", "test_embeddings.py", "chat/test_completions.py",
        "chat/completions/test_messages.py", "test_responses.py", "responses/test_input_items.py",
        "responses/test_input_tokens.py",
    ],
}  # fmt: skip


@nox.session(name="sdk_tests")
def sdk_tests(session: nox.Session) -> None:
    """The official Anthropic and OpenAI SDKs' own generated tests (`tests/api_resources` of the source distribution
    of the installed release, downloaded from PyPI) against the emulator, with a stateful pass that makes real objects
    for the tests' placeholder ids: each SDK's tally (passed, wrong, missing, refused as the API refuses) in
    build/sdk-tests/<sdk>.json; fails if any test is wrong or missing. posargs: the SDKs (default: both)."""
    session.install("-e", ".", *SDK_TEST_DEPS)
    build = Path("build/sdk-tests").absolute()
    build.mkdir(parents=True, exist_ok=True)
    plugin = Path("features/sdk_tests").absolute()
    failed: list[str] = []
    for sdk in session.posargs or list(SDK_TEST_MODULES):
        version = session.run("python", "-c", f"import {sdk}; print({sdk}.__version__)", silent=True)
        version = str(version).strip()
        if not (build / f"{sdk}-{version}.tar.gz").exists():  # fetched once, from the package index pip is set to
            session.run(
                "python", "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:", "--dest", str(build),
                f"{sdk}=={version}",
            )  # fmt: skip
        source = build / f"{sdk}-{version}"
        if not source.exists():
            with tarfile.open(build / f"{sdk}-{version}.tar.gz") as archive:
                archive.extractall(build, filter="data")
        tally = build / f"{sdk}.json"
        with session.chdir(source):
            session.run(
                "python", "-m", "pytest", "-q", "--no-header", "-p", "no:cacheprovider", "-p", "lowtide_sdk_pass",
                "-o", "addopts=--tb=line" + (" -p tests._alias_httpx" if sdk == "anthropic" else ""),
                *(f"tests/api_resources/{module}" for module in SDK_TEST_MODULES[sdk]),
                env={"PYTHONPATH": str(plugin), "LOWTIDE_SDK": sdk, "LOWTIDE_SDK_TALLY": str(tally)},
                success_codes=[0, 1],
            )  # fmt: skip
        counts = json.loads(tally.read_text())
        session.log(
            f"{sdk} {version}: " + ", ".join(f"{k}: {v if isinstance(v, int) else len(v)}" for k, v in counts.items())
        )
        if counts["wrong"] or counts["missing"]:
            failed.append(sdk)
    if failed:
        session.error(f"generated tests wrong or missing for: {', '.join(failed)} (build/sdk-tests/<sdk>.json)")


@nox.session(allow_parallel=False)
def coverage_report(session: nox.Session) -> None:
    """Combine the coverage of every session that measured (each its folder under COVERAGE_DATA) and fail under
    `fail_under` ([tool.coverage.report] in pyproject.toml)."""
    session.install("coverage[toml]>=7.10")
    measured = sorted(str(folder) for folder in COVERAGE_DATA.glob("*") if folder.is_dir())
    session.run("coverage", "combine", *measured, success_codes=[0, 1])
    session.run("coverage", "report")


def _contain_ledger(session: nox.Session) -> None:
    """A test that forgets to choose a ledger writes under build/ (a folder for each session, as sessions may run at
    once), never to the user's real one."""
    session.env["LOWTIDE_LEDGER"] = str(Path(f"build/test-ledger/{session.name}/ledger.sqlite3").absolute())


def _measure(session: nox.Session) -> None:
    """The session's coverage data (its processes', and their subprocesses') goes to a folder of its own under
    COVERAGE_DATA, emptied first: sessions running at once never erase each other's, and `coverage_report` combines
    the folders."""
    folder = COVERAGE_DATA / session.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    session.env["COVERAGE_FILE"] = str(folder / ".coverage")


# What the selected sessions need from the system that pip cannot install (a PostgreSQL server, Chromium and its
# driver, node and npm, curl: features/support/system_packages.py says which session needs what), found, or installed
# with apt-get, once, as nox loads this file and before any session starts: a check in each session would run apt-get
# in two sessions at once, and a session started before another's check failed would run for nothing.
SYSTEM_CHECKED = "LOWTIDE_NOX_SYSTEM_PACKAGES"
"""Set once the check has run: the processes nox starts for each session (which load this file again) skip it."""
LISTING_ONLY = {"-l", "--list", "--list-sessions", "--json", "--usage", "-h", "--help", "--version"}


def _selected_sessions() -> list[str] | None:
    """The names of the sessions this nox command runs (those it names, what they require, or the defaults), as nox
    itself lists them (`--list --json`, with the same options); None when the command only lists, or when nox cannot
    say (it says why itself, next)."""
    args = sys.argv[1:]
    options = args[: args.index("--")] if "--" in args else args
    if LISTING_ONLY & set(options):
        return None
    listed = subprocess.run(
        [sys.executable, "-m", "nox", *options, "--list", "--json", "--noxfile", __file__],
        capture_output=True, text=True, env={**os.environ, SYSTEM_CHECKED: "listing"}, check=False,
    )  # fmt: skip
    if listed.returncode != 0:
        return None
    return [str(entry["name"]) for entry in json.loads(listed.stdout)]


def _ensure_system_packages() -> None:
    """Check (and install, where this user may) what the selected sessions need; end nox, having said in one line
    what is missing and the command that installs it, where that fails."""
    if os.environ.get(SYSTEM_CHECKED) or "_ARGCOMPLETE" in os.environ:
        return
    os.environ[SYSTEM_CHECKED] = "checked"
    sessions = _selected_sessions()
    if sessions:
        checker = Path(__file__).parent / "features" / "support" / "system_packages.py"
        if subprocess.run([sys.executable, str(checker), *sessions], check=False).returncode != 0:
            raise SystemExit(1)


_ensure_system_packages()
