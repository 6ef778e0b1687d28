"""gradcli's command line: ``gradcli.cli.app`` (typer) and the command modules."""
