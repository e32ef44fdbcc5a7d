"""The `auditor` command (`python -m auditor` and the installed script)."""

import gc

from auditor import set_program_environment


def run() -> None:
    set_program_environment()  # (before numpy is imported)
    # Loading the libraries makes no garbage: the collector, left on, walked
    # their objects again and again as they loaded (about 50 ms); what is
    # loaded is then set apart from the collector's walks for good.
    gc.disable()
    from auditor.cli import main

    gc.freeze()
    gc.enable()
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
