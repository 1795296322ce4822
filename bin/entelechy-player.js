#!/usr/bin/env node
process.stderr.write('entelechy-player: the Player is not built yet (see the open issue "The Player"); use `entelechy render` meanwhile\n');
process.exitCode = 1;
