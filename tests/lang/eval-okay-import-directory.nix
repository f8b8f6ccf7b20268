import ./lib/dir
