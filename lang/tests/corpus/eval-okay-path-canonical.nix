# path literals are normalised: `..` and `.` components disappear
[ (./lib/../lib/data.txt == ./lib/data.txt) (./lib/./data.txt == ./lib/data.txt) (baseNameOf ./lib/sub/..) ]
