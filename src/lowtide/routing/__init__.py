"""Deadlines across venues: a deadline parsed and checked (`deadlines`), the venues a provider declares (`venues`), how
long a batch of this provider takes by this ledger's history (`history`), and the cheapest route that meets a
deadline (`routes`). Neutral: a provider's venues are data it declares through the provider seam."""
