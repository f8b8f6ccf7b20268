# expect: cannot compare a set with a set
{ } < { }
