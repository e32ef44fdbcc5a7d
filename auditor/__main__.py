"""The `auditor` command (`python -m auditor` and the installed script)."""

import gc

from auditor import loading_without_collection, set_program_environment


def run() -> None:
    set_program_environment()  # (before numpy is imported)
    with loading_without_collection():
        from auditor.cli import main
    try:
        main()
    finally:
        # Every output is written and closed by now. The collection Python
        # runs as it exits would only walk every object of pandas, pyarrow
        # and the audit once more (about 80 ms, a tenth of a small log's
        # audit): they are left to the end of the process instead.
        gc.freeze()


if __name__ == "__main__":
    run()
