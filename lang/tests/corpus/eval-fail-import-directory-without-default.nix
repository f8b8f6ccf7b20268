# expect: No such file or directory
import ./lib/readdir/sub
