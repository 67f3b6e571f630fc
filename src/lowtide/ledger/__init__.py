"""The durable record of every batch and request, kept by the store the location's scheme names (`kinds`): a SQLite
file (`sqlite/`, the default), a PostgreSQL database (`postgres/`), this process's memory (`memory/`), a plugin's."""
