# A user-level validation throws a message.
let
  checkReplicas = n:
    if n > 0 then n else throw "replicas must be positive, got ${toString n}";
in
{
  replicas = checkReplicas (-1);
}
