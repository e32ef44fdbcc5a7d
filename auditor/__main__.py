"""The `auditor` command (`python -m auditor` and the installed script)."""

from auditor import run_as_program


def _command():
    from auditor.cli import main

    return main


def run() -> None:
    run_as_program(_command)


if __name__ == "__main__":
    run()
