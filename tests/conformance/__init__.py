"""What every task family and the whole package go through."""
