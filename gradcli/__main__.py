"""``python -m gradcli``: the gradcli command line."""
from gradcli.cli.app import main

if __name__ == "__main__":
    main()
