# hashFile digests a file's bytes, as hashString does a string's.
let
  file = ./lib/hash-me.txt;
  algos = [ "md5" "sha1" "sha256" "sha512" ];
in
{
  digests = map (a: builtins.hashFile a file) algos;
  sameAsString = builtins.hashFile "sha256" file == builtins.hashString "sha256" (builtins.readFile file);
  fromString = builtins.hashFile "md5" (toString file) == builtins.hashFile "md5" file;
}
