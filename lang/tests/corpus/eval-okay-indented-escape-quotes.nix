# ''' inside an indented string produces two single quotes
[ ''a'''b'' ''x''''' '' ''' '' '''''''''' ]
