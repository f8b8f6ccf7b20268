# expect: kd.inventory: unknown attribute 'adresses'
# expect: Did you mean 'addresses'?
let kd = import <kdeploy>; in
kd.cluster {
  name = "t";
  nodes = kd.inventory {
    adresses = [ "10.0.0.1" ];  # <- error points here
  };
}
