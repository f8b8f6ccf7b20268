# expect: cannot compare a Boolean with a Boolean
true < false
