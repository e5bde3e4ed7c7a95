import sys

from sim2real_deploy.sim2sim.cli import main

sys.exit(main())
