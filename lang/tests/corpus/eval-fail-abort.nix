# expect: evaluation aborted with the following error message: 'abort message'
abort "abort message"
