# An error deep inside nested sets, found when the whole value is output.
{
  cluster = {
    nodes = {
      master = {
        kubelet = {
          maxPods = 110;
          podCidr = "10.244.0.0/" + 16;
        };
      };
    };
  };
}
