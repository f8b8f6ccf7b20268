# The same nested attribute path is defined twice.
{
  spec.template.image = "nginx:1.25";
  spec.replicas = 2;
  spec.template.image = "nginx:1.26";
}
