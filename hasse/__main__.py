from hasse.cli import main

raise SystemExit(main())
