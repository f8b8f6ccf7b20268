import ./dir
