# expect: file 'kdeploy-nonexistent' was not found in the Nix search path
import <kdeploy-nonexistent>
