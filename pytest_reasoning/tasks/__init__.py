"""Task families: generators, prompts and scorers. Families never import each other."""
