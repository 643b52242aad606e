# A GPU cluster's inventory as Terraform configuration (chapter 27). It uses no provider, so `terraform init`,
# `validate` and `plan` run offline; on a cloud, the terraform_data resources would be the provider's instances
# (e.g. aws_instance with instance_type = "p5e.48xlarge") and the same outputs would feed Ansible.
terraform {
  required_version = ">= 1.5"
}

variable "gpu_nodes" {
  description = "number of GPU servers"
  type        = number
  default     = 4
  validation {
    condition     = var.gpu_nodes >= 1 && var.gpu_nodes <= 1024
    error_message = "gpu_nodes must be between 1 and 1024."
  }
}

variable "gpus_per_node" {
  description = "GPUs in each server (8 for an HGX H200)"
  type        = number
  default     = 8
}

locals {
  nodes = [for i in range(var.gpu_nodes) : format("gpu%03d", i + 1)]
}

resource "terraform_data" "gpu_node" {
  for_each = toset(local.nodes)
  input = {
    hostname = each.key
    gpus     = var.gpus_per_node
  }
}

output "total_gpus" {
  value = var.gpu_nodes * var.gpus_per_node
}

output "ansible_inventory" {
  value = join("\n", concat(["[gpu_nodes]"], [for n in local.nodes : "${n} expect_gpus=${var.gpus_per_node}"]))
}
