"""A throwaway PostgreSQL cluster for the tests: `initdb` into a temporary directory, a server on a free loopback port
(and a Unix socket in that directory), one database per test, everything stopped and removed at the end: by
`stop()`, at exit, or, when the test process dies without either (SIGKILL), by a watchdog process that outlives it.

Shared by behave (`features/environment.py`) and Robot (`robot/PostgresLibrary.py`). Needs the distribution's
server (`apt-get install postgresql`: nox installs it, `system_packages.py`). PostgreSQL refuses to run as root: when
the tests run as root, the cluster belongs to the `postgres` user the package made, and its programs run through
`runuser`.

    with PostgresCluster.start() as cluster:
        url = cluster.create_database("scenario_1")   # postgresql://lowtide:<password>@127.0.0.1:PORT/scenario_1
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, LiteralString, cast

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

__all__ = ["PostgresCluster", "PostgresUnavailable", "server_binaries"]

DEBIAN = Path("/usr/lib/postgresql")
"""Where Debian's `postgresql` package puts each major version's server (`15/bin/postgres`)."""
USER = "lowtide"
"""The role the tests connect as: a password of its own, so that the tests see a password in every URL."""


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server is installed here (install the distribution's `postgresql` package)."""


def server_binaries(environ: Mapping[str, str] = os.environ, debian: Path = DEBIAN) -> Path:
    """The directory of `initdb`, `pg_ctl` and `postgres`: $LOWTIDE_PG_BIN, else the newest under
    /usr/lib/postgresql (Debian), else wherever `pg_ctl` is on PATH (`environ` and `debian` name another system's, as
    `system_packages.py`'s scenarios do)."""
    explicit = environ.get("LOWTIDE_PG_BIN")
    if explicit:
        return Path(explicit)
    found_in_debian = sorted(
        (p for p in debian.glob("*/bin") if (p / "postgres").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if found_in_debian:
        return found_in_debian[-1]
    found = shutil.which("pg_ctl", path=environ.get("PATH", os.defpath))
    if found and (Path(found).resolve().parent / "postgres").exists():
        return Path(found).resolve().parent
    raise PostgresUnavailable(
        "No PostgreSQL server found: install it (Debian: apt-get install -y postgresql) or set LOWTIDE_PG_BIN."
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


RUNNING: list[PostgresCluster] = []
"""The clusters this process started and has not stopped: what a hung step asks what their sessions wait on."""


class PostgresCluster:
    """One running cluster of its own; `stop()` (or leaving the `with`, or the program's exit) removes it."""

    def __init__(self, directory: Path, port: int, password: str, owner: str | None) -> None:
        self.directory = directory
        self.port = port
        self.password = password
        self._owner = owner
        self._bin = server_binaries()
        self._stopped = False
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._admins: dict[str, Connection[TupleRow]] = {}
        """By database, a superuser's psycopg connection over the Unix socket (`_execute`), kept for the run."""
        self._made: set[str] = set()
        """The databases `create_database` made."""

    @property
    def data(self) -> Path:
        return self.directory / "data"

    @classmethod
    def start(cls, locale: str | None = None) -> PostgresCluster:
        """initdb, start on a free loopback port, make the `lowtide` role; the cluster is stopped at exit at
        the latest, even when the tests are interrupted. Its locale is `locale`, else $LOWTIDE_PG_LOCALE, else "C"
        (another, en_US.UTF-8 say, where the system has it: the suite or a benchmark run on a server set up as many
        installations are)."""
        locale = locale or os.environ.get("LOWTIDE_PG_LOCALE") or "C"
        binaries = server_binaries()
        owner = "postgres" if os.geteuid() == 0 else None
        directory = Path(tempfile.mkdtemp(prefix="lowtide-pg-"))
        if owner is not None:
            account = pwd.getpwnam(owner)
            os.chown(directory, account.pw_uid, account.pw_gid)
        directory.chmod(0o700)
        cluster = cls(directory, _free_port(), secrets.token_urlsafe(18), owner)
        atexit.register(cluster.stop)
        RUNNING.append(cluster)
        try:
            password_file = directory / "superuser-password"
            password_file.write_text(cluster.password + "\n")
            if owner is not None:
                os.chown(password_file, account.pw_uid, account.pw_gid)
            cluster._run(
                str(binaries / "initdb"), "-D", str(cluster.data), "-U", "postgres", "-A", "scram-sha-256",
                f"--pwfile={password_file}", "--encoding=UTF8", f"--locale={locale}", "--no-sync",
            )  # fmt: skip
            password_file.unlink()
            with (cluster.data / "postgresql.conf").open("a") as conf:
                conf.write(
                    "listen_addresses = '127.0.0.1'\n"
                    f"port = {cluster.port}\n"
                    f"unix_socket_directories = '{directory}'\n"
                    "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                    "max_connections = 200\nshared_buffers = 32MB\n"
                    "log_min_messages = warning\nlogging_collector = off\n"
                )
            cluster._run(
                str(binaries / "pg_ctl"), "-D", str(cluster.data), "-l", str(directory / "server.log"),
                "-w", "-t", "60", "start",
            )  # fmt: skip
            cluster.sql(f"CREATE ROLE {USER} LOGIN CREATEDB PASSWORD '{cluster.password}'")
            # A scenario makes a deadlock whose victim must be lowtide's connection, not its own: the role may set how
            # long its own connection waits before it looks for one (PostgreSQL 15 and later: on an older server that
            # scenario fails, saying so, and the others run).
            if int(cluster.sql("SHOW server_version_num").strip()) >= 150000:
                cluster.sql(f"GRANT SET ON PARAMETER deadlock_timeout TO {USER}")
            cluster._watch(os.getpid())
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _watch(self, parent: int) -> None:
        """A watchdog of its own session that stops and removes the cluster once `parent` is gone, however it went
        (SIGKILL included, where neither `finally` nor `atexit` runs); `stop()` ends it first."""
        prefix = " ".join(shlex.quote(p) for p in self._prefix())
        script = (
            f"while kill -0 {parent} 2>/dev/null; do sleep 1; done; "
            f"{prefix} {shlex.quote(str(self._bin / 'pg_ctl'))} -D {shlex.quote(str(self.data))} -m immediate stop; "
            f"rm -rf {shlex.quote(str(self.directory))}"
        )
        self._watchdog = subprocess.Popen(
            ["sh", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _prefix(self) -> list[str]:
        return ["runuser", "-u", self._owner, "--"] if self._owner is not None else []

    def __enter__(self) -> PostgresCluster:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def url(self, database: str, *, password: str | None = None) -> str:
        """The URL the tests give lowtide: over TCP on loopback, as the `lowtide` role with its password."""
        secret = self.password if password is None else password
        return f"postgresql://{USER}:{secret}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, *, icu_locale: str | None = None) -> str:
        """A new, empty database owned by `lowtide`; its URL. With `icu_locale` ("en-US", say), its text is ordered
        by that language's rules (ICU's, which the server has whatever the system's locales), as the database of an
        installation made with a language's locale orders it."""
        collation = f" LOCALE_PROVIDER icu ICU_LOCALE '{icu_locale}'" if icu_locale else ""
        self._execute(f'CREATE DATABASE "{name}" OWNER {USER} TEMPLATE template0{collation}')
        self._made.add(name)
        return self.url(name)

    def create_schema(self, database: str, name: str, *, icu_locale: str | None = None) -> str:
        """A new, empty schema owned by `lowtide` in `database` (made first if need be, `icu_locale` as
        `create_database` takes it); the URL of the database with that schema first on its search path. Much cheaper
        than a database of its own (no files to copy, no checkpoint to drop it): what a run of hundreds of scenarios
        needs."""
        if database not in self._made:
            self.create_database(database, icu_locale=icu_locale)
        self._execute(f'CREATE SCHEMA "{name}" AUTHORIZATION {USER}', database)
        return f"{self.url(database)}?options=-csearch_path%3D{name}"

    def drop_schema(self, database: str, name: str) -> None:
        self._execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE', database)

    def drop_database(self, name: str) -> None:
        admin = self._admins.pop(name, None)
        if admin is not None:
            admin.close()
        self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._made.discard(name)

    def _execute(self, statement: str, database: str = "postgres") -> None:
        """Run `statement` as the superuser on a connection kept for `database`: what a run does for each of its
        hundreds of scenarios (a schema made and dropped). Through psql (`sql`), each took a `runuser` and a `psql`
        process, 57 ms of CPU a scenario of the 434 of `nox -s postgres`'s behave parts; here 1 ms. A connection the
        server ended (`restart`) is made again; without psycopg, psql runs it."""
        try:
            import psycopg
        except ImportError:
            self.sql(statement, database)
            return
        for attempt in (1, 2):
            admin = self._admins.get(database)
            if admin is None or admin.closed:
                admin = self._admins[database] = psycopg.connect(
                    host=str(self.directory), port=self.port, user="postgres", password=self.password,
                    dbname=database, autocommit=True, connect_timeout=10,
                )  # fmt: skip
            try:
                admin.execute(cast(LiteralString, statement))  # the test's own statements, as `sql` takes them
                return
            except psycopg.OperationalError:
                admin.close()  # ended by a restart of the server: made again, once
                if attempt == 2:
                    raise

    def waits(self) -> str:
        """What each session of the cluster is doing and waiting on, and each lock asked for and not granted."""
        return self.sql(
            "SELECT 'session ' || pid || ' ' || coalesce(datname, '') || ' ' || coalesce(state, '') || ' wait '"
            " || coalesce(wait_event_type || '/' || wait_event, '-') || ': ' || left(coalesce(query, ''), 160)"
            " FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
            " UNION ALL SELECT 'lock not granted: ' || locktype || ' ' || mode || ' pid ' || pid || ' blocked by '"
            " || pg_blocking_pids(pid)::text FROM pg_locks WHERE NOT granted"
        )

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run `statement` as the superuser over the Unix socket (psql), returning its unaligned output."""
        psql = self._bin / "psql"
        command = [str(psql) if psql.exists() else "psql", "-h", str(self.directory), "-p", str(self.port)]
        command += ["-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-c", statement]
        return self._run(*command, env={"PGPASSWORD": self.password})

    def _run(self, *command: str, env: dict[str, str] | None = None) -> str:
        prefix = self._prefix()
        environment = {**os.environ, "LC_ALL": "C", **(env or {})}
        done = subprocess.run(
            [*prefix, *command], capture_output=True, text=True, env=environment, cwd=self.directory, check=False
        )
        if done.returncode != 0:
            log = self.directory / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{Path(command[0]).name} failed ({done.returncode}): {done.stderr.strip()}\n{tail}")
        return done.stdout.strip()

    def restart(self) -> None:
        """Restart the server as an operator would (`pg_ctl restart -m fast`): every connection is ended ("terminating
        connection due to administrator command"), transactions in flight are rolled back, and it is back when this
        returns."""
        self._pg_ctl("-m", "fast", "-w", "-t", "60", "restart")

    def shut_down(self) -> None:
        """Stop the server (`pg_ctl stop -m fast`) and leave it stopped: connections are refused until `start_up`."""
        self._pg_ctl("-m", "fast", "-w", "-t", "60", "stop")

    def start_up(self) -> None:
        """Start the server `shut_down` stopped, on the same port; back when this returns."""
        self._pg_ctl("-w", "-t", "60", "start")

    def _pg_ctl(self, *arguments: str) -> None:
        self._run(str(self._bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.directory / "server.log"), *arguments)

    def stop(self) -> None:
        """Stop the server (at once: nothing here needs to survive) and remove the directory; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self in RUNNING:
            RUNNING.remove(self)
        for admin in self._admins.values():
            with contextlib.suppress(Exception):
                admin.close()
        self._admins.clear()
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
        with contextlib.suppress(Exception):
            if (self.data / "postmaster.pid").exists():
                self._run(str(self._bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)


@contextlib.contextmanager
def running_cluster() -> Iterator[PostgresCluster]:
    """A cluster for the length of the `with`."""
    cluster = PostgresCluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
