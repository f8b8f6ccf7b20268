import (toString ./lib/simple.nix)
