"""The PostgreSQL ledger: one database shared by lowtide processes on any number of hosts, chosen by giving a
`postgresql://` URL wherever a ledger path is accepted. psycopg 3 is an optional dependency:
`pip install 'lowtide[postgres]'`.

- `url`: telling a URL from a path, and saying it without its password;
- `pool`: the sync and async connection pools, errors as `LedgerError` (password removed);
- `schema`: the versioned schema (`schema_version`) and its migrations;
- `steps`: operations as generators of statements, and their sync and async drivers;
- `claims`, `batches`, `results`, `copying`: the operations on requests, batches, results, and a ledger's rows;
- `ledger`: `PostgresLedger`, the sync `LedgerStore`; `aio`: `AsyncPostgresLedger`, its event loop's face;
- `notices`: the owners' heartbeat and the batches' notices; `runs`: bulk runs;
- `quotas`: `PostgresQuotaStore`, the live quota scopes in `live_quotas`.
"""

from __future__ import annotations

from lowtide.ledger.postgres.quotas import PostgresQuotaStore
from lowtide.ledger.postgres.url import configured_url, is_postgres_url, redacted

__all__ = ["PostgresQuotaStore", "configured_url", "is_postgres_url", "redacted"]
