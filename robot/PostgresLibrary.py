"""Robot keywords for a throwaway PostgreSQL cluster (`features/support/postgres.py`, shared with behave): started
on first use by a suite, one database per test, stopped and removed with the suite (or at exit, if interrupted).

Only the tests tagged `postgres` use it (`nox -s postgres`); importing it starts nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from robot.api.deco import keyword, library

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "features" / "support"))

from postgres import PostgresCluster  # features/support, shared with the behave scenarios


@library(scope="SUITE")
class PostgresLibrary:
    def __init__(self) -> None:
        self._cluster: PostgresCluster | None = None
        self._databases = 0

    @keyword("Create PostgreSQL Database")
    def create_postgresql_database(self) -> str:
        """A new database in the suite's cluster (started now if need be); its `postgresql://` URL, password in."""
        if self._cluster is None:
            self._cluster = PostgresCluster.start()
        self._databases += 1
        return self._cluster.create_database(f"robot_{self._databases}")

    @keyword("PostgreSQL Query")
    def postgresql_query(self, database: str, statement: str) -> str:
        """`statement`'s rows, as psql prints them unaligned (one line a row, `|` between columns)."""
        assert self._cluster is not None, "no cluster started"
        return self._cluster.sql(statement, database)

    @keyword("PostgreSQL Password")
    def postgresql_password(self) -> str:
        assert self._cluster is not None, "no cluster started"
        return self._cluster.password

    @keyword("Stop PostgreSQL")
    def stop_postgresql(self) -> None:
        if self._cluster is not None:
            self._cluster.stop()
            self._cluster = None

    @keyword("PostgreSQL Server Should Be Installed")
    def postgresql_server_should_be_installed(self) -> None:
        from postgres import server_binaries

        version = subprocess.run(
            [str(server_binaries() / "postgres"), "--version"], capture_output=True, text=True, check=True
        )
        print(version.stdout.strip())
