from driftgraph.cli import main

main()
