from rigidsim.cli.main import entry

entry()
