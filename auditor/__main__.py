"""The `auditor` command (`python -m auditor` and the installed script)."""

from auditor import set_program_environment


def run() -> None:
    set_program_environment()  # (before numpy is imported)
    from auditor.cli import main

    main()


if __name__ == "__main__":
    run()
