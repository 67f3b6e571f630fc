"""`lowtide dashboard`: a read-only web page over a ledger (`app`, the pages and their JSON; `data`, what each page
shows, read through the ledger's `views`; `static/`, the page, its script and its style, with no build step)."""
