"""`lowtide serve`: the HTTP server that answers live-looking API calls through batches: its app, the
bodies it reads and the keys of its clients.
"""
