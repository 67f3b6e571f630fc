"""What calls cost: prices, a usage priced once, the usage shapes providers report, and budgets."""
