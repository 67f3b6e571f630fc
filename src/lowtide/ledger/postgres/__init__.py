"""The PostgreSQL ledger: one database shared by lowtide processes on any number of hosts, chosen by giving a
`postgresql://` URL wherever a ledger path is accepted. psycopg 3 is an optional dependency:
`pip install 'lowtide[postgres]'`.

- `kind`: the `postgresql:` and `postgres:` schemes, registered as a kind of ledger (psycopg imported only when one
  is opened);
- `url`: a URL's password removed from any text (`scrub`);
- `pool`: the sync and async connection pools, errors as `LedgerError` (password removed);
- `schema`: the versioned schema (`schema_version`); `migration`: bringing it up to date;
- `steps`: operations as generators of statements, and their sync and async drivers;
- `claims`, `batches`, `results`, `copying`: the operations on requests, batches, results, and a ledger's rows;
- `ledger`: `PostgresLedger`, the sync `LedgerStore`; `aio`: `AsyncPostgresLedger`, its event loop's face;
- `notices`: the owners' heartbeat and the batches' notices; `runs`: bulk runs;
- `quotas`: `PostgresQuotaStore`, the live quota scopes in `live_quotas`.
"""
