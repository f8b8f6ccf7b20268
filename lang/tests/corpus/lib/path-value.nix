# evaluates to a path relative to this file
./data.txt
