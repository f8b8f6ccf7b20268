# A `let` inside a set whose `in` was forgotten.
{
  name = "web";
  ports = let http = 80; https = 443; [ http https ];
}
