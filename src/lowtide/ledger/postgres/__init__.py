"""The PostgreSQL ledger: one database shared by lowtide processes on any number of hosts, chosen by giving a
`postgresql://` URL wherever a ledger path is accepted.

So far it keeps the shared live quota (`PostgresQuotaStore`); batch mode, bulk runs and parking still need a SQLite
ledger and refuse a PostgreSQL URL before anything is sent. psycopg 3 is an optional dependency:
`pip install 'lowtide[postgres]'`.

- `url`: telling a URL from a path, and saying it without its password;
- `pool`: the async connection pool, errors as `LedgerError` (password removed);
- `schema`: the versioned schema (`schema_version`) and its migrations;
- `quotas`: `PostgresQuotaStore`, the live quota scopes in `live_quotas`.
"""

from __future__ import annotations

from lowtide.ledger.postgres.quotas import PostgresQuotaStore
from lowtide.ledger.postgres.url import configured_url, is_postgres_url, redacted

__all__ = ["PostgresQuotaStore", "configured_url", "is_postgres_url", "redacted"]
