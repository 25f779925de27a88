from inboxspec.cli import main

raise SystemExit(main())
