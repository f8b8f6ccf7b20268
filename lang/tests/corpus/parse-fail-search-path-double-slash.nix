# expect: syntax error, unexpected '<'
<kdeploy//lib.nix>
