"""`python -m auditor` is the same as the `auditor` command."""
from auditor.cli import main

main()
